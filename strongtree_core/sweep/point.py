"""One point of a sweep: fit the estimator on a fold's training rows, measure
every part on the tree's own predictions, and return one row.

This runs wherever the point runs (this process, a thread, a process worker,
a Dask worker): it takes only picklable values and returns a plain dict.
MIO points that may use HiGHS take a per-process slot first, as HiGHS runs
one solve at a time in a process.
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone

from strongtree_core.tree.claim import claim
from strongtree_core.encoding.features import equals_label
from strongtree_core.engine.routes import InfeasibleError, NoTreeInTimeError
from strongtree_core.errors import StrongTreeError
from strongtree_core.metrics._inputs import _labels, _labels_array, positive_present
from strongtree_core.metrics.gap_intervals import compared_counts, notion_gap_interval
from strongtree_core.metrics.promise import is_constant
from strongtree_core.solvers.highs_run import when_idle
from strongtree_core.solvers.licence import LICENCE_FILE, WLS_KEYS, apply_credentials, licence_params
from strongtree_core.sweep.grid import Fold, Point
from strongtree_core.metrics.verdict import gap_verdict
from strongtree_core.vocabulary import FAIRNESS_NOTIONS

#: The parts of a fold, in column order.
PARTS = ("train", "calibration", "test")
#: Settings every row carries, whether or not the grid varies them.
SETTINGS = ("fairness", "fairness_bound", "depth", "regularization")
#: Environment variables of a Gurobi licence handed to the workers.
CREDENTIAL_KEYS = (*WLS_KEYS, LICENCE_FILE)
#: Seconds between two looks at Stop while waiting for the process's HiGHS slot.
SLOT_POLL = 0.1
#: The row of a point whose fit raised something else than the estimator's own errors.
FAILED_POINT = "The point failed: {kind}: {detail}"


def result_columns(notions: tuple[str, ...]) -> list[str]:
    """The columns after the settings: how the solve ended, then every part's measures, then the tree.

    ``claim``: what the solve proved, in :func:`strongtree_core.tree.claim.claim`'s words (its label:
    "Optimal over kept thresholds", "Constant tree (promise)", ...).
    ``{part}_gap_low`` / ``{part}_gap_high``: the 95 % simultaneous interval of the point's own
    gap on that part (:func:`strongtree_core.metrics.fairness_intervals`; the largest over the
    point's notions); ``{part}_verdict``: that gap against the point's δ in
    :func:`strongtree_core.metrics.verdict.gap_verdict`'s words ("within δ = 5.0 pp (the certificate on
    these rows)", "undecided against δ = 5.0 pp (95 % interval ...)"; "" without a constraint);
    ``{part}_baseline_accuracy``: accuracy there of predicting the training rows' majority class.
    """
    return [
        "status", "certified", "claim", "objective", "bound", "optimality_gap", "time", "method",
        *(f"n_{p}" for p in PARTS), *(f"{p}_accuracy" for p in PARTS), *(f"{p}_gap" for p in PARTS),
        *(f"{p}_{n}" for p in PARTS for n in notions),
        *(f"{p}_{end}" for p in PARTS for end in ("gap_low", "gap_high", "verdict", "baseline_accuracy")),
        "error", "tree",
    ]


@dataclass(frozen=True)
class Problem:
    """What every point of a sweep shares: the estimator, the data and the folds.

    Attributes
    ----------
    estimator : estimator
        The unfitted template; each point is ``clone(estimator).set_params(**settings)``.
    X : DataFrame or ndarray, shape (n_rows, n_columns)
    y : Series, shape (n_rows,)
    sensitive, legitimate : DataFrame or None, n_rows
        Protected groups and legitimate levels, one column per attribute (named as
        in X when they are columns of X, so that the tree never splits on them).
    folds : tuple of Fold
    notions : tuple of str
        The fairness notions measured on every part (a column each).
    credentials : mapping of str to str
        Gurobi licence settings to use in the worker (environment variable names).
    """

    estimator: Any
    X: Any
    y: pd.Series
    sensitive: pd.DataFrame | None
    legitimate: pd.DataFrame | None
    folds: tuple[Fold, ...]
    notions: tuple[str, ...]
    credentials: Mapping[str, str]
    groups: "Codes | None" = None
    levels: "Codes | None" = None


@dataclass(frozen=True)
class Codes:
    """The protected groups (or legitimate levels) of every row as codes, as the metrics label them
    (:func:`strongtree_core.metrics.fairness_intervals`: one label per row, several columns joined, sorted)."""

    codes: np.ndarray  # shape (n_rows,), int64
    names: tuple[str, ...]

    @classmethod
    def of(cls, frame, what: str) -> "Codes | None":
        if frame is None:
            return None
        labels = _labels(frame, what, len(frame))
        codes, names = pd.factorize(pd.Series(labels, dtype=object), sort=True)
        return cls(np.asarray(codes, dtype=np.int64), tuple(names))


def measured_notions(sensitive, legitimate) -> tuple[str, ...]:
    """Every notion that can be measured: none without groups, conditional parity only with legitimate levels."""
    if sensitive is None:
        return ()
    return tuple(n for n in FAIRNESS_NOTIONS if n != "conditional_statistical_parity" or legitimate is not None)


def gather_credentials() -> dict[str, str]:
    """The Gurobi licence of this process (WLS keys, also those an app set, and a licence file), when configured."""
    found = {k: str(v) for k, v in licence_params().items() if k in WLS_KEYS}
    if os.environ.get(LICENCE_FILE):
        found[LICENCE_FILE] = os.environ[LICENCE_FILE]
    return found


#: One HiGHS solve at a time in a process: points that may run it queue here.
_HIGHS_SLOT = threading.Lock()


def may_run_highs(params: Mapping[str, Any]) -> bool:
    """Whether a point with these parameters may solve a MIO with HiGHS (the exact search never does)."""
    exact = params.get("formulation", "auto") == "auto" and params.get("exact_search", True)
    return not exact and params.get("solver", "auto") in ("auto", "highs")


@contextmanager
def highs_slot(params: Mapping[str, Any], stop: threading.Event | None) -> Iterator[bool]:
    """Hold this process's HiGHS slot while the point runs (if it may use HiGHS); False when Stop came first.

    The next point gets the slot only when HiGHS is idle again: a fit can end with HiGHS still at work
    in the background (its root relaxation given up at the deadline, a run left behind at its limit),
    and the next point's solve would meet it (``HIGHS_BUSY``) instead of taking its turn."""
    if not may_run_highs(params):
        yield True
        return
    while not _HIGHS_SLOT.acquire(timeout=SLOT_POLL):
        if stop is not None and stop.is_set():
            yield False
            return
    try:
        yield True
    finally:
        when_idle(_HIGHS_SLOT.release)


def _take(data, rows: np.ndarray):
    if data is None:
        return None
    if isinstance(data, (pd.DataFrame, pd.Series)):
        return data.iloc[rows].reset_index(drop=True)
    return np.asarray(data)[rows]


def _fairness_label(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else "+".join(value)


def settings_row(point: Point, params: Mapping[str, Any]) -> dict[str, Any]:
    """The point's number, fold and settings (the fixed four, then any other parameter the grid sets)."""
    fairness = _fairness_label(params.get("fairness"))
    row = {
        "point": point.index, "fold": point.fold, "fairness": fairness,
        "fairness_bound": float(params["fairness_bound"]) if fairness is not None else math.nan,
        "depth": params.get("depth"), "regularization": params.get("regularization"),
    }
    for key, value in point.settings.items():
        if key not in row:
            row[key] = _fairness_label(value) if isinstance(value, (list, tuple)) else value
    return row


def _failed_status(error: StrongTreeError) -> str:
    """The row's status of a fit that ended in ``error``, by the error's type (never its words: a refusal
    whose text happens to read like a proof is still an error)."""
    if isinstance(error, InfeasibleError):
        return "infeasible"
    if isinstance(error, NoTreeInTimeError):
        return "time_limit_no_tree"
    return "error"


def _pos_label(clf) -> Any:
    if getattr(clf, "pos_label", None) is not None:
        return clf.pos_label
    classes = getattr(clf, "classes_", ())
    return classes[1] if len(classes) == 2 else None


def _own_notions(params: Mapping[str, Any]) -> list[str]:
    fairness = params.get("fairness")
    return [] if fairness is None else [fairness] if isinstance(fairness, str) else list(fairness)


def _measure(problem: Problem, clf, rows: np.ndarray, own: list[str], part: str, majority=None) -> dict[str, float]:
    """Accuracy, the point's own gap and every notion's gap on one part, from the tree's predictions.

    Each gap and its 95 % simultaneous interval come from the counts of the groups' rows and positive
    predictions (:func:`~strongtree_core.metrics.gap_intervals.compared_counts`), the numbers of
    :func:`strongtree_core.metrics.fairness_report` and :func:`strongtree_core.metrics.fairness_intervals`
    (``tests/test_sweep_plain.py`` checks them equal) without their tables: a few hundred microseconds a
    part, where the tables took 30-50 ms a point."""
    out: dict[str, float] = {f"{part}_accuracy": math.nan, f"{part}_gap": math.nan}
    out.update({f"{part}_{n}": math.nan for n in problem.notions})
    out.update({f"{part}_{end}": math.nan for end in ("gap_low", "gap_high", "baseline_accuracy")})
    out[f"{part}_verdict"] = ""
    if rows.size == 0:
        return out
    truth = problem.y.iloc[rows].to_numpy()
    pred = clf.predict(_take(problem.X, rows))
    out[f"{part}_accuracy"] = float(np.mean(pred == truth))
    if majority is not None:
        out[f"{part}_baseline_accuracy"] = float(np.mean(truth == majority))
    positive = _pos_label(clf)
    if problem.notions and positive is not None and positive_present(truth, pred, positive):
        groups = problem.groups if problem.groups is not None else Codes.of(problem.sensitive, "sensitive_features")
        levels = problem.levels if problem.levels is not None or problem.legitimate is None \
            else Codes.of(problem.legitimate, "legitimate_features")
        true_pos = equals_label(_labels_array(truth), positive)
        pred_pos = equals_label(_labels_array(pred), positive)
        spans: dict[str, tuple[float, float, float, int]] = {}
        for notion in problem.notions:
            cohorts = compared_counts(notion, true_pos, pred_pos, groups.codes[rows], len(groups.names),
                                      legit=None if levels is None else levels.codes[rows])
            present = any(bool((c.rows > 0).any()) for c in cohorts)
            spans[notion] = (*notion_gap_interval(cohorts, 0.95, "wilson"), present)
        gaps = {n: spans[n][0] for n in problem.notions}
        out.update({f"{part}_{n}": gaps[n] for n in problem.notions})
        mine = [gaps[n] for n in own if n in gaps and not math.isnan(gaps[n])]
        out[f"{part}_gap"] = max(mine) if mine else math.nan
        if own:
            shown = [spans[n] for n in own if n in gaps and spans[n][4]]  # a notion with a group's rate to show
            lows = [s[1] for s in shown if not math.isnan(s[1])]
            highs = [s[2] for s in shown if not math.isnan(s[2])]
            out[f"{part}_gap_low"] = max(lows) if lows else math.nan
            out[f"{part}_gap_high"] = max(highs) if highs else math.nan
            bound = getattr(clf, "fairness_bound", None)
            found = None if bound is None else gap_verdict(
                out[f"{part}_gap"], float(bound), training=part == "train", constrained=True,
                interval=(out[f"{part}_gap_low"], out[f"{part}_gap_high"]), constant=is_constant(clf.tree_.structure))
            out[f"{part}_verdict"] = "" if found is None else found.words
    return out


def blank_row(problem: Problem, point: Point, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The row of a point before (or without) its fit: settings and sizes, no tree, every measure NaN."""
    if params is None:
        params = clone(problem.estimator).set_params(**point.settings).get_params(deep=False)
    fold = problem.folds[point.fold]
    row: dict[str, Any] = {**settings_row(point, params), **dict.fromkeys(result_columns(problem.notions), math.nan)}
    row.update({f"n_{p}": int(getattr(fold, p).size) for p in PARTS})
    row.update(status="error", certified=False, claim="", method="", error="", tree=None)
    if "fairness_confidence" in point.settings:
        row.update(training_bound=math.nan, promise_constant=False)
    return row


def error_row(problem: Problem, point: Point, message: str) -> dict[str, Any]:
    """The row of a point that could not be run (its worker lost too often, a fault): status "error"."""
    row = blank_row(problem, point)
    row["error"] = message
    return row


def _fit_kwargs(problem: Problem, fold: Fold) -> dict[str, Any]:
    out = {}
    if problem.sensitive is not None:
        out["sensitive_features"] = _take(problem.sensitive, fold.train)
    if problem.legitimate is not None:
        out["legitimate_features"] = _take(problem.legitimate, fold.train)
    return out


def run_point(problem: Problem, point: Point, stop: threading.Event | None = None) -> dict[str, Any] | None:
    """Fit and measure one point; its row, or None when Stop came before it started.

    A fit the estimator refuses (infeasible constraints, no tree in time, bad settings)
    is a row too: its status says so, ``error`` holds the message, and it has no tree.
    """
    apply_credentials(problem.credentials)
    fold = problem.folds[point.fold]
    clf = clone(problem.estimator).set_params(**point.settings)
    params = clf.get_params(deep=False)
    row = blank_row(problem, point, params)
    with highs_slot(params, stop) as ready:
        if not ready or (stop is not None and stop.is_set()):
            return None
        started = time.perf_counter()
        try:
            clf.fit(_take(problem.X, fold.train), _take(problem.y, fold.train), stop=stop, **_fit_kwargs(problem, fold))
            failure = None
        except StrongTreeError as exc:
            failure = exc
        row["time"] = time.perf_counter() - started
    return fitted_row(problem, point, clf, params, row, failure)


@dataclass(frozen=True)
class PlannedPoint:
    """A point read and encoded here, whose solve runs in a worker
    (:func:`strongtree_core.engine.worker.solve_task` runs ``task``)."""

    clf: Any
    params: Mapping[str, Any]
    row: dict[str, Any]
    plan: Any  # the estimator's plan of its fit (the training data, the encoding, the spec, the task)
    seconds: float  # spent here before the solve

    @property
    def task(self):
        return self.plan.task


def plan_point(problem: Problem, point: Point) -> dict[str, Any] | PlannedPoint | None:
    """A point up to its solve, in the process that started the sweep: the data read and encoded as
    ``fit`` reads them, the engine's task a plain value for a worker.  A row when the fit ends before
    its solve (settings or data refused); None for a point whose fit is more than one solve (a
    promise on new rows refits): that one runs whole in a worker (:func:`run_point`)."""
    clf = clone(problem.estimator).set_params(**point.settings)
    params = clf.get_params(deep=False)
    if params.get("fairness_confidence") is not None:
        return None
    fold = problem.folds[point.fold]
    row = blank_row(problem, point, params)
    started = time.perf_counter()
    try:
        fairness = clf._validate_parameters()
        kwargs = _fit_kwargs(problem, fold)
        plan = clf._plan_fit(_take(problem.X, fold.train), _take(problem.y, fold.train), None,
                             kwargs.get("sensitive_features"), kwargs.get("legitimate_features"), fairness, started)
    except StrongTreeError as exc:
        row["time"] = time.perf_counter() - started
        return fitted_row(problem, point, clf, params, row, exc)
    return PlannedPoint(clf, params, row, plan, time.perf_counter() - started)


def finish_point(problem: Problem, point: Point, planned: PlannedPoint, answer) -> dict[str, Any]:
    """The row of a point from its worker's :class:`~strongtree_core.engine.worker.Answer`: the
    estimator's fitted attributes set here as ``fit`` sets them, then the tree measured."""
    started = time.perf_counter()
    clf, failure = planned.clf, answer.error
    if answer.fault is not None:
        return error_row(problem, point, FAILED_POINT.format(kind=answer.fault[0], detail=answer.fault[1]))
    if isinstance(failure, InfeasibleError):
        failure = clf._infeasible(failure, planned.plan)
    elif failure is None:
        try:
            clf._finish_solve(planned.plan, answer.solved)
        except StrongTreeError as exc:
            failure = exc
    row = dict(planned.row)
    row["time"] = planned.seconds + answer.seconds + (time.perf_counter() - started)
    return fitted_row(problem, point, clf, planned.params, row, failure)


def fitted_row(problem: Problem, point: Point, clf, params: Mapping[str, Any], row: dict[str, Any],
               failure: StrongTreeError | None) -> dict[str, Any]:
    """``row`` (settings, sizes and the fit's time) completed from a fitted estimator, or from the
    error that ended its fit."""
    fold = problem.folds[point.fold]
    if failure is not None:
        row.update(status=_failed_status(failure), error=str(failure))
        return row
    own = _own_notions(params)
    rec = clf.record_
    row.update(status=rec.status, certified=bool(rec.certified), claim=claim(rec).short, objective=rec.objective,
               bound=rec.bound, optimality_gap=rec.gap, method=rec.method)
    if "fairness_confidence" in point.settings:  # the promise's tightened training bound, δ itself without one
        promise = getattr(clf, "fairness_promise_", None)
        row["training_bound"] = promise.training_bound if promise is not None else row["fairness_bound"]
        row["promise_constant"] = bool(promise is not None and promise.constant)
    train_y = problem.y.iloc[fold.train]
    majority = train_y.value_counts().idxmax() if len(train_y) else None
    for part in PARTS:
        row.update(_measure(problem, clf, getattr(fold, part), own, part, majority))
    row["tree"] = clf.tree_.to_json()
    return row
